/**
 * Builds a synthetic trace of `calls` tool calls: turns of `perTurn` calls each, a model
 * request before every batch, a concurrency cap of 8 (so later calls of a batch wait), every
 * 10th turn with an unsafe call at the end, and a sprinkling of failures and timeouts.
 *
 * @param {number} calls
 * @param {{ perTurn?: number }} [options]
 * @returns {object[]} trace events
 */
export function syntheticTrace(calls, { perTurn = 20 } = {}) {
  const base = { sessionId: "session-synthetic", runId: "run-synthetic" };
  const events = [];
  let time = 1000;
  events.push({
    ...base,
    type: "run_started",
    time,
    model: "synthetic",
    tools: ["fetch", "write"],
    parentToolUseId: null,
  });
  let made = 0;
  let turn = 0;
  while (made < calls) {
    turn++;
    const count = Math.min(perTurn, calls - made);
    events.push({ ...base, type: "model_request_started", time, turn, messageCount: turn * 2 });
    time += 40 + (turn % 7) * 5;
    events.push({
      ...base,
      type: "model_request_finished",
      time,
      turn,
      latencyMs: 40,
      retries: 0,
      stopReason: "tool_use",
      toolCalls: count,
      usage: {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
      },
    });
    const unsafe = turn % 10 === 0 ? count - 1 : -1;
    const ids = [];
    for (let index = 0; index < count; index++) {
      ids.push(`toolu_${turn}_${index}`);
      events.push({
        ...base,
        type: "tool_call_queued",
        time,
        turn,
        index,
        id: ids[index],
        name: index === unsafe ? "write" : "fetch",
        kind: "tool",
      });
    }
    const safe = unsafe === -1 ? [...ids.keys()] : [...ids.keys()].slice(0, unsafe);
    const runs = [{ concurrent: true, indices: safe }];
    if (unsafe !== -1) runs.push({ concurrent: false, indices: [unsafe] });
    events.push({
      ...base,
      type: "batch_planned",
      time,
      turn,
      plan: { mode: "safe", maxConcurrency: 8, runs },
    });
    // Slots of the cap: each call takes the slot that frees first.
    const slots = new Array(8).fill(time);
    let batchEnd = time;
    const finishes = [];
    for (const index of safe) {
      const slot = slots.indexOf(Math.min(...slots));
      const start = slots[slot];
      const duration = 5 + ((index * 37 + turn * 11) % 30);
      slots[slot] = start + duration;
      finishes.push({ index, start, end: start + duration });
      batchEnd = Math.max(batchEnd, start + duration);
    }
    if (unsafe !== -1) finishes.push({ index: unsafe, start: batchEnd, end: batchEnd + 10 });
    for (const { index, start, end } of finishes) {
      const status =
        (turn * perTurn + index) % 97 === 0
          ? "failed"
          : (turn * perTurn + index) % 113 === 0
            ? "timed_out"
            : "completed";
      events.push({
        ...base,
        type: "tool_call_started",
        time: start,
        turn,
        index,
        id: ids[index],
        name: index === unsafe ? "write" : "fetch",
        kind: "tool",
        runIndex: index === unsafe ? 1 : 0,
        inFlight: 1,
      });
      events.push({
        ...base,
        type: "tool_call_finished",
        time: end,
        turn,
        index,
        id: ids[index],
        name: index === unsafe ? "write" : "fetch",
        kind: "tool",
        status,
        isError: status !== "completed",
        durationMs: end - start,
      });
      time = Math.max(time, end);
    }
    made += count;
  }
  events.push({
    ...base,
    type: "run_finished",
    time,
    subtype: "success",
    numTurns: turn,
    durationMs: time - 1000,
    usage: { inputTokens: 0, outputTokens: 0 },
  });
  return events;
}
