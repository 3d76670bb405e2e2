/** Builds a synthetic trace of `calls` tool calls (see synthetic-trace.mjs). */
export function syntheticTrace(calls: number, options?: { perTurn?: number }): object[];
