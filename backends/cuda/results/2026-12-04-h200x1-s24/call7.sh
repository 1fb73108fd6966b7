#!/bin/bash
# Session 24, call 7 (one H200). Can two of NCCL's CTAs share an SM? The
# resources NCCL 2.28.3's sm_90 kernels ask for per thread and per CTA
# (cuobjdump -res-usage on the node's libnccl.so.2), and the H200's limits
# per SM (registers, shared memory, threads) from the driver.
LIB=$(ldconfig -p | awk '/libnccl.so.2 /{print $NF; exit}')
echo "lib $LIB" > $OUT/nccl-res.txt
ls -l "$LIB" >> $OUT/nccl-res.txt 2>&1
command -v cuobjdump >> $OUT/nccl-res.txt 2>&1 || ls /usr/local/cuda*/bin/cuobjdump >> $OUT/nccl-res.txt 2>&1
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
"$CUOBJ" --version >> $OUT/nccl-res.txt 2>&1
"$CUOBJ" -res-usage -arch sm_90 "$LIB" > $OUT/res-all.txt 2>&1; echo "rc $?" >> $OUT/nccl-res.txt
wc -l $OUT/res-all.txt >> $OUT/nccl-res.txt
# the kernels' names and their resource lines, reduced to unique register/shared/stack figures
grep -A1 "Function ncclDevKernel" $OUT/res-all.txt | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" | sort | uniq -c | sort -rn > $OUT/nccl-kernels-res.txt
grep -c "Function ncclDevKernel" $OUT/res-all.txt >> $OUT/nccl-res.txt
grep "Function ncclDevKernel" $OUT/res-all.txt | head -20 >> $OUT/nccl-res.txt
gzip -f $OUT/res-all.txt
nvidia-smi --query-gpu=name,driver_version,serial --format=csv >> $OUT/nccl-res.txt
ls $OUT | wc -l
