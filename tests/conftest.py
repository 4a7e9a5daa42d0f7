"""Make the project root importable for tests run without installation."""
