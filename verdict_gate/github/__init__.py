"""The GitHub Actions edge: the action, workflow commands and outputs, event payloads."""
