"""calc: small pure functions (the attack corpus's base project)."""
