"""The workbench's fitting half: everything franq fits from labelled data, and the commands
that rebuild the files shipped in ``franq/data/``. The scoring library only loads what is
fitted here; nothing under ``franq/`` outside the workbench imports it.

    training_claims    scored, labelled claims as arrays (what every fit reads)
    calibrator    FRANQ calibrators from labelled claims (``franq fit calibrator``)
    probe         probes on a model's internals (``franq fit probe``)
    faithfulness_map   the combined / context-PMI logistic maps (``franq fit faithfulness``)
    shipped       the table of files in ``franq/data/`` and their rebuild (``franq fit shipped``),
                  from the committed data (generations), the calibrators
                  (shipped_calibrators, shipped_verifier, shipped_pairs, shipped_fast) and the
                  probe file (shipped_probes); shipped_inputs: the quick drift check
    verifier      the verifier's recipes, training data and training (``franq fit verifier``)
"""
