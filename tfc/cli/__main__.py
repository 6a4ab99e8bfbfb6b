"""``python -m tfc.cli``: the same command group as the ``tfc`` script (used where the script is not on PATH)."""
from tfc.cli import main

if __name__ == "__main__":
    main()
