"""`python -m kaeru` is the same as the `kaeru` console script."""

from kaeru.cli.app import main

if __name__ == "__main__":
    main()
