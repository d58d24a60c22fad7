import csv,sys,collections
name=sys.argv[1]
rows=list(csv.reader(open(name)))
hdr=rows[1]; data=rows[2:]
idx={h:i for i,h in enumerate(hdr)}
sc=[h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
tot=collections.Counter(); ninstr=0; byop=collections.Counter(); samp_op=collections.Counter()
for r in data:
    try: n=int(r[idx['Instructions Executed']].replace(',',''))
    except: n=0
    ninstr+=n
    op=r[1].split()[0] if r[1].split() else ''
    if op.startswith('@'): op=r[1].split()[1]
    op=op.split('.')[0]
    byop[op]+=n
    for h in sc:
        v=int(r[idx[h]].replace(',','') or 0); tot[h]+=v; samp_op[op]+=v
T=sum(tot.values())
print("samples",T,"warp instr",ninstr)
for h,v in tot.most_common(12): print(f"  {h:28s} {100*v/T:5.1f}%")
print("instr by op:")
for op,v in byop.most_common(25): print(f"  {op:10s} {v:10d} {100*v/ninstr:5.1f}%  samples {100*samp_op[op]/T:5.1f}%")
