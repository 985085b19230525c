#!/usr/bin/env python3
"""For every kernel whose name contains FILTER (default reduce_full_kernel), each loop's 16-byte
global loads and how many of them are issued before the first instruction that reads a loaded
register. A loop of kUnroll loads should issue all kUnroll first (vector_load.cuh,
after_all_loads): otherwise a thread waits a DRAM round trip in the middle of its batch.

Usage: cuobjdump --dump-sass OBJ_OR_BINARY | scripts/sass_load_batches.py [FILTER]
(cuobjdump and nvdisasm: the device machine's toolkit, or pip's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm.)
"""
import sys,re,subprocess
cur=None; lines=[]; out={}
for l in sys.stdin:
    m=re.match(r"\s+Function : (\S+)",l)
    if m:
        if cur: out[cur]=lines
        cur=m.group(1); lines=[]; continue
    m=re.match(r"\s+/\*([0-9a-f]{4,5})\*/\s+(.*?);",l)
    if m and cur: lines.append((int(m.group(1),16),m.group(2).strip()))
if cur: out[cur]=lines
filt=sys.argv[1] if len(sys.argv)>1 else "reduce_full_kernel"
def pattern(body):
    loaded=set(); seq=[]; first=None; n=0
    for a,s in body:
        b=s.split(None,1)[1] if s.startswith("@") else s
        op=b.split()[0]
        if "LDG" in op and "128" in op:
            r=int(re.search(r"R(\d+),",b).group(1)); n+=1
            loaded.difference_update(range(r,r+4)); seq.append("L"); loaded.update(range(r,r+4)); continue
        rest=b.split(None,1)[1] if len(b.split(None,1))>1 else ""
        parts=rest.split(",",1)
        srcs=[int(x) for x in re.findall(r"\bR(\d+)",parts[1] if len(parts)>1 else "")]
        if any(x in loaded for x in srcs):
            seq.append("u")
            if first is None: first=n
    return first, n, "".join(seq)
for name,ins in out.items():
    if filt not in name: continue
    dm=subprocess.run(["c++filt"],input=name,capture_output=True,text=True).stdout.strip()
    dm=re.sub(r"foldkit::cuda::|foldkit::|\(.*","",dm)[:80]
    res=[]
    for k,(a,s) in enumerate(ins):
        m=re.search(r"BRA\S* (?:`\(\.L_x_\d+\)|0x([0-9a-f]+))",s)
        if m and m.group(1):
            t=int(m.group(1),16)
            if t<a:
                body=[(x,y) for (x,y) in ins if t<=x<=a]
                f,n,seq=pattern(body)
                if n>=2: res.append(f"loop@{t:#x}: {n} loads, {f} before first use")
    print(f"{dm:80} " + "; ".join(res))
