exec(open("analyse.py").read())
dev = dev_sets()
nat = {k: load(k) for k in ("wice_fit", "expertqa_train")}
rep = {k: load(k) for k in ("wice_heldout", "expertqa_rand_test", "expertqa_contradicted")}
ud = load("userdev")
shipped = SlotCombiner.load(C / "slot-combiner-first.json")
ident = Combo(np.zeros((3, len(INPUTS))))
cands = {"v7": ident, "shipped combiner": Combo(shipped.weights)}
P = np.vstack([d[0] for d in dev.values()]); F = np.vstack([d[1] for d in dev.values()]); Y = np.concatenate([d[2] for d in dev.values()])
Pn = np.vstack([nat[k][0] for k in nat]); Fn = np.vstack([nat[k][1] for k in nat]); Yn = np.concatenate([natural3(nat[k][2]) for k in nat])
cands["syn, +b"] = fit(P, F, Y, True)
cands["syn+nat, +b"] = fit(np.vstack([P, Pn]), np.vstack([F, Fn]), np.r_[Y, Yn], True)
cands["syn+nat, no b"] = fit(np.vstack([P, Pn]), np.vstack([F, Fn]), np.r_[Y, Yn], False)
for name, cb in cands.items():
    print("=====", name, "b", np.round(cb.b, 2))
    for k, (p, f, y) in dev.items(): print(f"  [choice] {k:20s} acc3 {np.mean(cb.apply(p, f).argmax(1)==y):.3f} nm argmaxC {np.mean(cb.apply(p,f)[y==2].argmax(1)==1):.2f} con argmaxC {np.mean(cb.apply(p,f)[y==1].argmax(1)==1):.2f}")
    for k, (p, f, y, _) in nat.items(): print(f"  [choice] {k:20s}", binrep(cb.apply(p, f), y))
    for k, (p, f, y, _) in rep.items(): print(f"  [report] {k:20s}", binrep(cb.apply(p, f), y))
    print("  [report] userdev", userrep(cb.apply(ud[0], ud[1]), ud[2], ud[3]))
