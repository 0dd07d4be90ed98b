"""The subcommands of ``harness``, one module each (the table is ``harness.cli.COMMANDS``).

A command module reads its flags, calls its stage and prints what it did; it
keeps heavy imports (TensorFlow) inside ``run``. Expected errors are not
caught here: ``harness.cli`` turns them into one line and exit code 2.
"""
