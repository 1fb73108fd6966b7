import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f)); ev=d['traceEvents'] if isinstance(d,dict) else d
    xs=[e for e in ev if e.get('ph')=='X']
    big=[e for e in xs if e['tid']=='big']
    small=sorted([e for e in xs if e['tid']=='small'],key=lambda e:e['ts'])
    if not big or not small: print(f, 'no spans', set(e['tid'] for e in xs)); continue
    b0,b1=big[0]['ts'],big[0]['ts']+big[0]['dur']
    inside=sum(1 for e in small if e['ts']+e['dur']<=b1)
    print(f"{f.split('/')[-1]:40} big {b0:8.1f}-{b1:8.1f} us | small: {inside:2d} of {len(small)} end inside; first ends {small[0]['ts']+small[0]['dur']-b1:+8.1f} us from the big end")
