"""Search: the query pipeline (keyword and vector legs), fusion, dates and snippets."""
