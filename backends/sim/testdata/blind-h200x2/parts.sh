# Sourced by run.sh and predict.sh (from the repository root): the scenario files of each part of
# the two-GPU blind set, and its strategies from strategies.txt.
D=backends/sim/testdata/blind-h200x2
part_files() {
  case $1 in
  pairs) ls $D/*.yaml ;;
  async-tp) ls $D/graphs/*-ag-gemm-2gpu.yaml $D/graphs/*-gemm-rs-2gpu.yaml ;;
  layers) ls $D/graphs/*-layer*-2gpu.yaml $D/graphs/*-bucketed-*-2gpu.yaml ;;
  op-streams) ls $D/graphs/*-x[0-9]*-2gpu.yaml ;;
  esac | paste -sd,
}
part_strategies() { sed -n "s/^$1 //p" $D/strategies.txt; }
PARTS="pairs async-tp layers op-streams"
