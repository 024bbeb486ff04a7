"""Third-party code the tests carry, each folder with its source, commit and licence."""
