"""Health: index checks and repairs (doctor) and the secret scanner/redactor."""
