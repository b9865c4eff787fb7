"""The shipped long calibrator moved by a prior (None, .80, .90, .948) on rand_test, its copies and WiCE:
    OMP_NUM_THREADS=1 python experiments/2026-11-28-long-calibrator-tc-of-pc/shipped_prior.py   # 10 s
"""
from pathlib import Path
import numpy as np
from franq.fit import natural as nat
from calibration.three_condition import ThreeConditionCalibrator
sets = nat.natural_sets(Path("datasets"), None, compute=False, echo=lambda m: None)
test, tcontra, wice = sets["expertqa-test"], sets["expertqa-test-contra"], sets["wice-heldout"]
path = "franq/data/calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
for prior in (None, 0.80, 0.90, 0.948):
    cal = ThreeConditionCalibrator.from_json(path)
    cal.prior = prior
    m = nat.scores(cal.predict(nat.inputs(test)), test, boot=200)
    both = nat.join(test, tcontra); mb = nat.scores(cal.predict(nat.inputs(both)), both)
    pc = cal.predict(nat.inputs(tcontra))
    mw = nat.scores(cal.predict(nat.inputs(wice)), wice)
    print(prior, cal.base_rate, f"rand_test ECE {m['ece']:.3f} floor {m['ece_floor'][0]:.3f} Brier {m['brier']:.4f} AUROC {m['auroc']:.3f} | +copies ECE {mb['ece']:.3f} caught {(pc<.5).sum()}/{len(pc)} | wice ECE {mw['ece']:.3f}")
