import { type ToolResult, toolResultText } from "@lattice/tools";

/** The call that ends the run (T8, T10): the first result in tool_use order with `endTurn`. */
export interface ToolBatchEndTurn {
  /** Its position in the batch. */
  readonly index: number;
  /** Its tool_use id. */
  readonly id: string;
  /** Its text content (text blocks joined with newlines): the run's `result` (T8). */
  readonly text: string;
  /** Its `structuredResult`, when it returned one (T11). */
  readonly structuredResult?: unknown;
}

/**
 * Finds which result ends the run (T8–T11): the first, in tool_use order, whose result has
 * `endTurn: true`. Other results are untouched (T9).
 *
 * @param results - The batch's results, in tool_use order.
 * @returns The first ending call, or `undefined` when none asked to end the run.
 */
export function findEndTurn(
  results: readonly { readonly id: string; readonly result: ToolResult }[],
): ToolBatchEndTurn | undefined {
  for (let index = 0; index < results.length; index++) {
    const { id, result } = results[index]!;
    if (!result.endTurn) continue;
    const text = toolResultText(result);
    return result.structuredResult !== undefined
      ? { index, id, text, structuredResult: result.structuredResult }
      : { index, id, text };
  }
  return undefined;
}
