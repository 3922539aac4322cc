#!/usr/bin/env bash
# mpirun -np 3 of a Fashion-MNIST grid stores exactly the metrics a local run stores (same seeds,
# one thread per trial), with trials on every rank.
source "$(dirname "$0")/lib.sh" "$@"
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: $data missing (apt-get install dataset-fashion-mnist)"; exit 77; }
args=(run "$SRC/configs/quickstart.yaml")
small=(--set data.train_limit=1000 --set data.test_limit=300 --set training.epochs=2
       --set resources.cpu_slots=1)
"$SWEEP" "${args[@]}" "${small[@]}" --out local > local.txt 2>&1 || { cat local.txt; fail "local run"; }
timeout 300 mpirun -np 3 "$SWEEP" "${args[@]}" "${small[@]}" --out mpi > mpi.txt 2>&1 ||
  { cat mpi.txt; fail "mpirun -np 3 run"; }
metrics="select t.number, m.name, m.step, m.epoch, m.value from metrics m join trials t
         on t.id = m.trial_id where m.name <> 'images_per_second' order by 1, 2, 3"
q local/quickstart/sweep.db "$metrics" > local.metrics
q mpi/quickstart/sweep.db "$metrics" > mpi.metrics
[ -s local.metrics ] || fail "the local run stored no metrics"
diff local.metrics mpi.metrics > /dev/null || { diff local.metrics mpi.metrics | head; fail "metrics differ"; }
devices=$(q mpi/quickstart/sweep.db "select group_concat(distinct device) from trials")
for d in rank1:cpu:0 rank2:cpu:0; do
  [[ ",$devices," == *",$d,"* ]] || fail "no trial ran on $d (devices: $devices)"
done
check_store mpi/quickstart/sweep.db 2
grep -q "on 3 ranks" mpi.txt || { cat mpi.txt; fail "the run did not say it runs on 3 ranks"; }
echo "PASS: $(wc -l < mpi.metrics) metric rows identical; devices $devices"
