import type { TimelineCallStatus } from "./timeline-call-status.js";

/** The icon and the words each status is shown with; colour and pattern only repeat them. */
export const STATUS_TEXT: Readonly<
  Record<TimelineCallStatus | "running", { readonly icon: string; readonly text: string }>
> = {
  completed: { icon: "✓", text: "completed" },
  failed: { icon: "✗", text: "failed" },
  invalid_input: { icon: "⚠", text: "invalid input" },
  unknown_tool: { icon: "?", text: "unknown tool" },
  denied: { icon: "⊘", text: "denied" },
  refused: { icon: "⊗", text: "refused by policy" },
  policy_error: { icon: "⊗", text: "policy error" },
  cancelled: { icon: "■", text: "cancelled" },
  abandoned: { icon: "■", text: "abandoned" },
  timed_out: { icon: "◷", text: "timed out" },
  running: { icon: "…", text: "no result in trace" },
};

/**
 * A duration as a person reads it, precise enough to tell sub-millisecond calls apart:
 * `0.30 ms`, `12.5 ms`, `3000 ms`, `12.40 s`.
 */
export function formatDuration(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  return `${ms >= 1 ? ms.toFixed(1) : ms.toFixed(2)} ms`;
}

/** A time since the trace's start, to a hundredth of a millisecond: `+3000.05 ms`, `+12.34567 s`. */
export function formatOffset(ms: number): string {
  return ms >= 10_000 ? `+${(ms / 1000).toFixed(5)} s` : `+${ms.toFixed(2)} ms`;
}

/** An axis label: as many decimals as the step between labels needs (`0.25 ms`, `300 ms`, `12 s`). */
export function formatTick(ms: number, step: number): string {
  const decimals = (unit: number) => Math.min(6, Math.max(0, -Math.floor(Math.log10(unit))));
  if (step >= 1000) return `${(ms / 1000).toFixed(decimals(step / 1000))} s`;
  return `${ms.toFixed(decimals(step))} ms`;
}

/**
 * Text cut to at most `max` characters, ending in "…" when it was cut (never in the middle of a
 * surrogate pair): for names repeated in summaries, where the full text is shown elsewhere.
 */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** A percentage for a style, with three decimals; `0%` for anything not finite. */
export function pct(value: number): string {
  return `${Number.isFinite(value) ? value.toFixed(3) : "0"}%`;
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

const HTML_SPECIAL = /[&<>"']/;

/** Text for HTML content or a quoted attribute: `& < > " '` escaped. */
export function escapeHtml(text: string): string {
  if (!HTML_SPECIAL.test(text)) return text;
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** Characters a `<script>` element's JSON must not hold as they are. */
const SCRIPT_UNSAFE = /[<>\u2028\u2029]/;

/** JSON that is safe inside a `<script type="application/json">` element: no `<`, `>` or line separators. */
export function jsonForScript(value: unknown): string {
  const json = JSON.stringify(value);
  // Most traces have none of them: one scan instead of four replacements.
  if (!SCRIPT_UNSAFE.test(json)) return json;
  return json
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
