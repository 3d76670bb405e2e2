// Batches for the makespan benchmark, shared by the model server and the client.
// Each entry is one tool call: safe (may overlap) or not, and how long its handler waits.
const safe = (ms) => ({ safe: true, ms });
const unsafe = (ms) => ({ safe: false, ms });

export const MAKESPAN_SCENARIOS = {
  "safe-50x20": Array.from({ length: 50 }, () => safe(20)),
  mixed: [
    ...Array.from({ length: 12 }, () => safe(20)),
    unsafe(20),
    ...Array.from({ length: 8 }, () => safe(30)),
    unsafe(10),
    ...Array.from({ length: 25 }, () => safe(20)),
  ],
};

/** The ideal makespan of a batch in "safe" mode under a cap: runs of safe calls, each run in waves. */
export function idealMakespan(batch, cap) {
  let total = 0;
  let run = [];
  const flush = () => {
    // Greedy list scheduling of equal or mixed durations inside one run: simulate `cap` slots.
    const slots = new Array(Math.min(cap, run.length)).fill(0);
    for (const ms of run) {
      slots.sort((a, b) => a - b);
      slots[0] += ms;
    }
    total += slots.length ? Math.max(...slots) : 0;
    run = [];
  };
  for (const call of batch) {
    if (call.safe) run.push(call.ms);
    else {
      flush();
      total += call.ms;
    }
  }
  flush();
  return total;
}
