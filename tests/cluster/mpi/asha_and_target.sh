#!/usr/bin/env bash
# Stopping rules and cancels reach trials on other ranks: ASHA stops some of them early; a
# reached metric.target cancels the ones still running there. Neither hangs. Rank 0 only
# coordinates (SWEEP_COORDINATOR_ONLY): every trial runs on ranks 1-2, so what is checked does not
# depend on how many trials a loaded machine lets the other ranks claim (rank 0 once took 7 of 9
# under ./run-tests, and ASHA then had none of theirs left to stop).
source "$(dirname "$0")/lib.sh" "$@"
asha="  early_terminate: {type: asha, min_epochs: 1, eta: 3}"
# Good rates first: asynchronous ASHA promotes the first arrivals at a rung and stops the worse
# ones that come after them.
config=$(TRAIN=1024 RATES="0.3, 0.1, 0.03, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6" tiny_config asha 9 6 "$asha")
timeout 300 mpirun -np 3 -x SWEEP_COORDINATOR_ONLY=1 "$SWEEP" run "$config" --out runs > asha.txt 2>&1 || { cat asha.txt; fail "asha sweep"; }
stopped=$(q runs/asha/sweep.db "select count(*) from trials where state = 'stopped_early' and device like 'rank%'")
on_zero=$(q runs/asha/sweep.db "select count(*) from trials where device not like 'rank%'")
[ "$on_zero" -eq 0 ] || fail "SWEEP_COORDINATOR_ONLY=1, yet $on_zero trials ran on rank 0"
[ "$stopped" -gt 0 ] || { q runs/asha/sweep.db "select number, device, state from trials"; fail "ASHA stopped no trial on another rank"; }
echo "asha: $stopped trials on ranks 1-2 stopped early"

config=$(TRAIN=4096 tiny_config target 6 20)
sed -i 's/  metric: {name: val_accuracy, goal: maximize}/  metric: {name: val_accuracy, goal: maximize, target: 0.05}/' "$config"
timeout 300 mpirun -np 3 -x SWEEP_COORDINATOR_ONLY=1 "$SWEEP" run "$config" --out runs > target.txt 2>&1 || { cat target.txt; fail "target sweep"; }
grep -q "reached by" target.txt || { cat target.txt; fail "the target was not reported reached"; }
cancelled=$(q runs/target/sweep.db "select count(*) from trials where state = 'cancelled' and started_at is not null and device like 'rank%'")
[ "$cancelled" -gt 0 ] || { q runs/target/sweep.db "select number, device, state, stop_reason from trials"; fail "no running trial on another rank was cancelled"; }
echo "PASS: asha stopped $stopped remote trials; the target cancelled $cancelled running remote trials"
