"""The workbench's fitting half: everything franq fits from labelled data, and the commands
that rebuild the files shipped in ``franq/data/``. The scoring library only loads what is
fitted here; nothing under ``franq/`` outside the workbench imports it.

    calibrator    FRANQ calibrators from labelled claims (``franq fit calibrator``)
    probe         probes on a model's internals (``franq fit probe``)
"""
