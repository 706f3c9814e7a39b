"""Health: index checks (checks), repairs (repairs), the doctor's entry and report (doctor), secrets (secrets)."""
