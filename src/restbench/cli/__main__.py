"""`python -m restbench.cli`."""

from restbench.cli import main

main()
