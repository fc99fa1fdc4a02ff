"""`python -m relay_backend ...` runs the command line (see relay_backend.cli)."""
from .cli import main

if __name__ == "__main__":
    main()
