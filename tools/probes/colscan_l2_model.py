#!/usr/bin/env python3
# Sequential model of foldkit-colscan-l2-probe (colscan_l2_probe.cu)'s index arithmetic (tiles, groups, chunk scans,
# carries, phase B assembly) against numpy's cumsum over dim 0. Integer data: exact.
import numpy as np, random
K=8; T=256
def run(rows, cols, P):
    cols4=cols//4
    tc=1
    while tc<32 and tc*2<=cols4 and cols4%(tc*2)==0: tc*=2
    G=cols4//tc; tr=T//tc; tile_rows=tr*K
    tiles=(rows+tile_rows-1)//tile_rows*G
    P=min(P,tiles); chunks=(tiles+P-1)//P
    x=np.random.randint(-3,4,size=(rows,cols)).astype(np.int64)
    X=x.reshape(rows,cols4,4)
    agg=np.zeros((tiles,tc,4),np.int64); rel=np.zeros_like(agg)
    total=np.zeros((chunks,cols4,4),np.int64); carry=np.zeros((chunks+1,cols4,4),np.int64)
    def tile_rc(L): return L//G, L%G
    for c in range(chunks):
        first=c*P; end=first+min(P,tiles-first)
        for L in range(first,end):  # phase A
            rt,g=tile_rc(L)
            for ct in range(tc):
                col=g*tc+ct; s=np.zeros(4,np.int64)
                for rg in range(tr):
                    for k in range(K):
                        r=rt*tile_rows+k*tr+rg
                        if r<rows: s+=X[r,col]
                agg[L,ct]=s
        # scan_chunk
        per_col=1
        while per_col*2*cols4<=T: per_col*=2
        for j in range(cols4):
            g=j//tc; cj=j%tc
            l0=first+((g-first%G)%G+G)%G
            n=(end-1-l0)//G+1 if l0<end else 0
            span=(n+per_col-1)//per_col
            parts=[]; ranges=[]
            for q in range(per_col):
                lo=min(n,q*span); hi=min(n,lo+span); ranges.append((lo,hi))
                parts.append(sum((agg[l0+i*G,cj] for i in range(lo,hi)),np.zeros(4,np.int64)))
            for q in range(per_col):
                base=sum(parts[:q],np.zeros(4,np.int64))
                lo,hi=ranges[q]
                for i in range(lo,hi):
                    rel[l0+i*G,cj]=base; base=base+agg[l0+i*G,cj]
                if q==per_col-1: total[c,j]=base
        carry[c+1]=carry[c]+total[c] if c>0 else total[c]
    out=np.zeros_like(X)
    for L in range(tiles):  # phase B
        c=L//P; rt,g=tile_rc(L)
        for ct in range(tc):
            col=g*tc+ct
            pre=rel[L,ct]+(carry[c,col] if c>0 else 0)
            run_tot=[]
            for rg in range(tr):
                acc=np.zeros(4,np.int64); loc=[]
                for k in range(K):
                    r=rt*tile_rows+rg*K+k
                    acc=acc+(X[r,col] if r<rows else 0); loc.append((r,acc.copy()))
                run_tot.append((loc,acc))
            excl=np.zeros(4,np.int64)
            for rg in range(tr):
                loc,acc=run_tot[rg]
                for r,v in loc:
                    if r<rows: out[r,col]=pre+excl+v
                excl=excl+acc
    ref=np.cumsum(X,axis=0)
    assert (out==ref).all(), (rows,cols,P)
    return tiles,chunks,tc,G
random.seed(1); np.random.seed(1)
for rows,cols,P in [(5000,16,7),(3000,4,5),(1000,64,9),(700,256,13),(300,1024,11),(999,8,3),(64,4096,17),(4097,16,600),(257,128,2),(1,4,5)]:
    print(rows,cols,P,run(rows,cols,P))
