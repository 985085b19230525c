#!/usr/bin/env python3
# The index arithmetic of 2026-11-28-rows-block-stepped.patch and 2026-11-28-outer-argmax-pipelined.patch,
# modelled beside the loops they replace: every thread must read the same positions at the same
# offsets in the same order (so the same bits). Run: python3 docs/perf-log/patches/2026-11-28-index-model.py
# Model of the index arithmetic of the two patches against the loops they replace.
import random
def old_rows_block(s_begin, s_end, tid, threads, U, rv, V, stride, off_in):
    out=[]
    s0=s_begin+tid
    while s0 < s_end:
        for u in range(U):
            s=s0+u*threads
            if s < s_end:
                r=s//rv
                out.append((s, off_in + r*stride + (s-r*rv)*V))
        s0+=U*threads
    return out
def new_rows_block(s_begin, s_end, tid, threads, K, rv, V, stride, off_in):
    out=[]
    s_first=s_begin+tid
    run0=s_first//rv
    p=off_in+run0*stride+(s_first-run0*rv)*V
    load_step=(threads//rv)*stride
    s0=s_first
    while s0+(K-1)*threads < s_end:
        for u in range(K): out.append((s0+u*threads, p+u*load_step))
        s0+=K*threads; p+=K*load_step
    if s0 < s_end:
        for u in range(K):
            if s0+u*threads < s_end: out.append((s0+u*threads, p+u*load_step))
    return out
random.seed(1)
for it in range(20000):
    threads=256; V=random.choice([2,4,8])
    rv=random.choice([1,2,4,8,16,32,64,128,256])
    runs=random.randint(1,300); slots=rv*runs
    chunks=random.randint(1,8); per=(slots+chunks-1)//chunks; c=random.randrange(chunks)
    sb=c*per; se=min(sb+per, slots)
    stride=rv*V+random.randint(0,1000); off=random.randint(0,10**6); tid=random.randrange(threads)
    a=old_rows_block(sb,se,tid,threads,4,rv,V,stride,off)
    b=new_rows_block(sb,se,tid,threads,8,rv,V,stride,off)
    assert a==b,(it,rv,V,sb,se,tid)
print("rows-block stepped: same (slot, offset) sequence per thread in 20000 random cases")

def outer_plain(first, R, step, TY, kU):
    out=[]; r0=first
    whole_end=R-(kU-1)*TY
    while r0 < whole_end:
        out += [r0+u*TY for u in range(kU)]; r0+=step
    if r0 < R: out += [r0+u*TY for u in range(kU) if r0+u*TY < R]
    return out
def outer_pipelined(first, R, step, TY, kU):
    out=[]; r0=first; kH=kU//2
    whole_end=R-(kU-1)*TY
    if r0 < whole_end:
        ca=[r0+u*TY for u in range(kH)]; cb=[r0+(kH+u)*TY for u in range(kH)]
        while True:
            more = r0+step < whole_end
            out += ca
            if more: ca=[r0+step+u*TY for u in range(kH)]
            out += cb
            if more: cb=[r0+step+(kH+u)*TY for u in range(kH)]
            r0+=step
            if not more: break
    if r0 < R: out += [r0+u*TY for u in range(kU) if r0+u*TY < R]
    return out
for it in range(20000):
    TY=random.choice([1,2,4,8,16,32,64,128,256]); kU=8; chunks=random.randint(1,300)
    R=random.randint(0,20000); split=random.randrange(chunks); ty=random.randrange(TY)
    first=split*kU*TY+ty; step=chunks*kU*TY
    assert outer_plain(first,R,step,TY,kU)==outer_pipelined(first,R,step,TY,kU),(it,)
print("outer pipelined: same positions in the same order in 20000 random cases")
