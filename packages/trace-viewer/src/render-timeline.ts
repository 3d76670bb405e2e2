import type { TraceEvent } from "@lattice/core";
import {
  buildTimeline,
  type Timeline,
  type TimelineCall,
  type TimelineCallStatus,
  type TimelineModelCall,
  type TimelineRun,
  type TimelineTurn,
} from "./build-timeline.js";
import { ROW_PX, TIMELINE_CSS, TIMELINE_SCRIPT } from "./timeline-assets.js";

/** Options of {@link renderTimeline}. */
export interface RenderTimelineOptions {
  /** The page title and heading. Default: `"Lattice tool timeline"`. */
  readonly title?: string | undefined;
}

/** The icon and the words each status is shown with; colour and pattern only repeat them. */
const STATUS_TEXT: Record<TimelineCallStatus | "running", { icon: string; text: string }> = {
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
 * Renders a run's trace as one self-contained HTML page (inline style and script, no network
 * access, opens from disk): one row per tool call grouped by run and turn, model requests as
 * their own bars, time on the x axis. A call's queue wait (hatched) is drawn apart from its
 * running time (solid); the plan's reasons for waiting (a concurrency cap, an unsafe call),
 * policy refusals, denials, timeouts, errors, aborts and retries are written on the rows as
 * icons and words, and agent tools' child runs are nested under their call. Hovering or
 * focusing a bar shows its details; the arrow keys move between bars.
 *
 * @param events - Trace events, from `onTrace` or {@link parseTraceJsonl}, in emitted order.
 * @param options - {@link RenderTimelineOptions}.
 * @returns The HTML document as a string.
 */
export function renderTimeline(
  events: Iterable<TraceEvent>,
  options: RenderTimelineOptions = {},
): string {
  const timeline = buildTimeline(events);
  const title = options.title ?? "Lattice tool timeline";
  const scale = new Scale(timeline);
  const rows: string[] = [];
  const counter: Counter = { bar: 0, tips: [] };
  for (const run of timeline.runs) renderRun(run, 0, scale, rows, counter);
  const statusCounts = countStatuses(timeline);
  const summary = [
    `${timeline.callCount} tool call${timeline.callCount === 1 ? "" : "s"}`,
    `${timeline.modelCallCount} model request${timeline.modelCallCount === 1 ? "" : "s"}`,
    `${formatMs(timeline.end - timeline.start)} in all`,
    ...statusCounts,
  ].join(" · ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${TIMELINE_CSS}</style></head>
<body>
<header id="top">
<h1>${escapeHtml(title)}</h1>
<p class="summary" data-calls="${timeline.callCount}">${escapeHtml(summary)}</p>
<ul class="legend" aria-label="Legend">
<li><span class="swatch wait"></span>waiting in the queue</li>
<li><span class="swatch run"></span>running</li>
<li><span class="swatch" style="background:var(--model)"></span>model request (↻ retry)</li>
<li><span class="swatch late"></span>settled after its deadline</li>
<li>✓ completed · ✗ failed · ◷ timed out · ⊗ refused by policy · ⊘ denied · ■ cancelled / aborted · ⚠ invalid input · ‖ waited (cap or unsafe call) · ⚑ unsafe, runs alone · ✎ approval</li>
</ul>
<p class="help">Hover a bar, or focus one (Tab into the chart, then ↑ ↓ ← → Home End PgUp PgDn), for its times and status. Esc hides the details. <a id="skip" href="#end">Skip past the chart</a></p>
</header>
<div class="axis" aria-hidden="true"><div class="label">run / turn / call</div><div class="ticks">${scale.ticks()}</div></div>
<main aria-label="Tool calls by run and turn" style="--grid:${scale.gridPercent()}%">
${chunked(rows)}
</main>
<footer id="end"><a id="back" href="#top">↑ Back to the top</a></footer>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="tips">${jsonForScript(counter.tips)}</script>
<script>${TIMELINE_SCRIPT}</script>
</body></html>
`;
}

/** Rows per chunk: the unit the browser skips while it is off screen. */
const CHUNK_ROWS = 64;

/**
 * The rows in chunks of {@link CHUNK_ROWS}, each `content-visibility: auto` with its exact
 * height as its intrinsic size: the browser lays out and paints the chunks near the screen
 * only, and the page keeps its full height, so the scroll bar, scrolling, find-in-page, focus
 * and the accessibility tree see every row. This is what keeps a 10,000-call trace fast (O12).
 */
function chunked(rows: readonly string[]): string {
  const out: string[] = [];
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const end = Math.min(start + CHUNK_ROWS, rows.length);
    out.push(`<div class="chunk" style="contain-intrinsic-size:auto ${(end - start) * ROW_PX}px">`);
    for (let index = start; index < end; index++) out.push(rows[index]!);
    out.push("</div>");
  }
  return out.join("\n");
}

/** Numbers the bars and keeps each bar's tooltip fields, in bar order. */
interface Counter {
  bar: number;
  readonly tips: Record<string, string>[];
}

/** Maps trace times to percentages of the track and writes the axis. */
class Scale {
  readonly start: number;
  readonly span: number;
  readonly step: number;

  constructor(timeline: Timeline) {
    this.start = timeline.start;
    this.span = Math.max(timeline.end - timeline.start, 1);
    const rough = this.span / 10;
    const power = 10 ** Math.floor(Math.log10(rough));
    this.step = ([1, 2, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
  }

  at(time: number): number {
    return ((time - this.start) / this.span) * 100;
  }

  width(from: number, to: number): number {
    return (Math.max(to - from, 0) / this.span) * 100;
  }

  gridPercent(): string {
    return ((this.step / this.span) * 100).toFixed(4);
  }

  ticks(): string {
    const out: string[] = [];
    for (let time = 0; time <= this.span + 1e-9; time += this.step) {
      out.push(
        `<span class="tick" style="left:${pct(this.at(this.start + time))}">${formatMs(time)}</span>`,
      );
    }
    return out.join("");
  }
}

function renderRun(
  run: TimelineRun,
  depth: number,
  scale: Scale,
  rows: string[],
  counter: Counter,
): void {
  const nested = depth > 0 ? " nested" : "";
  const outcome =
    run.outcome === undefined
      ? "… no end in trace"
      : run.outcome.kind === "aborted"
        ? "■ aborted"
        : run.outcome.subtype === "success"
          ? "✓ success"
          : `✗ ${run.outcome.subtype}`;
  const markers = run.markers
    .map(
      (marker) =>
        `<span class="marker" style="left:${pct(scale.at(marker.time))}" title="${escapeHtml(marker.label)}">${MARKER_ICON[marker.kind]}<span class="sr">${escapeHtml(marker.label)}</span></span>`,
    )
    .join("");
  const head = depth > 0 ? `child run of ${run.parentToolUseId ?? ""}` : "run";
  rows.push(
    `<div class="row run-head${nested}" style="--depth:${depth}" data-run="${escapeHtml(run.runId)}"><div class="label">${escapeHtml(head)} <span class="id">${escapeHtml(run.runId)}</span>${run.model ? ` · ${escapeHtml(run.model)}` : ""} · ${escapeHtml(outcome)}${run.markers.length > 0 ? ` · ${escapeHtml(run.markers.map((marker) => `${MARKER_ICON[marker.kind]} ${marker.label}`).join(", "))}` : ""}</div><div class="track"><span class="span" style="left:${pct(scale.at(run.startedAt))};width:${pct(scale.width(run.startedAt, run.endedAt))}"></span>${markers}</div></div>`,
  );
  for (const turn of run.turns) renderTurn(turn, depth, nested, scale, rows, counter);
}

const MARKER_ICON: Record<TimelineRun["markers"][number]["kind"], string> = {
  approval_requested: "✎",
  approval_decided: "✎",
  resumed: "↪",
  aborted: "■",
};

function renderTurn(
  turn: TimelineTurn,
  depth: number,
  nested: string,
  scale: Scale,
  rows: string[],
  counter: Counter,
): void {
  for (const model of turn.models) {
    rows.push(
      `<div class="row turn-head${nested}" style="--depth:${depth}"><div class="label">turn ${turn.turn} · model ${modelLabel(model)}</div><div class="track">${modelBar(model, scale, counter)}</div></div>`,
    );
  }
  const batch = turn.batch;
  if (batch === undefined) return;
  const parts: string[] = [];
  if (batch.policy !== undefined && !batch.policy.allowed) {
    parts.push(
      `⊗ batch refused by policy${batch.policy.code ? ` (${batch.policy.code})` : ""}: ${batch.policy.message ?? ""}`,
    );
  }
  if (batch.plan !== undefined && batch.plan.runs.length > 0) {
    const name = (index: number) =>
      batch.calls.find((call) => call.index === index)?.name ?? `#${index}`;
    const plan = batch.plan.runs
      .map((run) => `[${run.indices.map(name).join(run.concurrent ? " ‖ " : " → ")}]`)
      .join(" → ");
    parts.push(`plan (${batch.plan.mode}, cap ${batch.plan.maxConcurrency}): ${plan}`);
  }
  if (parts.length > 0) {
    rows.push(
      `<div class="row batch-head${nested}" style="--depth:${depth}"><div class="label" title="${escapeHtml(parts.join(" · "))}">${escapeHtml(parts.join(" · "))}</div><div class="track"></div></div>`,
    );
  }
  for (const call of batch.calls) {
    rows.push(callRow(call, depth, nested, scale, counter));
    for (const child of call.children) renderRun(child, depth + 1, scale, rows, counter);
  }
}

function modelLabel(model: TimelineModelCall): string {
  const parts: string[] = [];
  if (model.failure !== undefined) parts.push("✗ failed");
  else if (model.finishedAt === undefined) parts.push("… no reply in trace");
  else parts.push(formatMs(model.finishedAt - model.startedAt));
  if (model.retries.length > 0) {
    parts.push(`↻ ${model.retries.length} retr${model.retries.length === 1 ? "y" : "ies"}`);
  }
  return escapeHtml(parts.join(" · "));
}

function modelBar(model: TimelineModelCall, scale: Scale, counter: Counter): string {
  const end = model.finishedAt ?? model.startedAt;
  const span = Math.max(end - model.startedAt, 1e-9);
  const retries = model.retries
    .map(
      (retry) =>
        `<span class="retry" style="left:${pct(((retry.time - model.startedAt) / span) * 100)}">↻</span>`,
    )
    .join("");
  const status =
    model.failure !== undefined
      ? `✗ failed: ${model.failure}`
      : model.finishedAt === undefined
        ? "… no reply in trace"
        : `✓ ${model.stopReason ?? "finished"}`;
  const detail = [
    model.toolCalls !== undefined ? `${model.toolCalls} tool call(s)` : "",
    model.tokens ? `${model.tokens.input} in / ${model.tokens.output} out tokens` : "",
    ...model.retries.map(
      (retry) =>
        `↻ retry ${retry.attempt}${retry.status !== undefined ? ` (HTTP ${retry.status})` : ""}: ${retry.message}`,
    ),
  ]
    .filter((part) => part !== "")
    .join("; ");
  const n = counter.bar++;
  const data: Record<string, string> = {
    title: `Model request, turn ${model.turn}`,
    turn: String(model.turn),
    started: formatAt(model.startedAt, scale),
    finished: model.finishedAt === undefined ? "" : formatAt(model.finishedAt, scale),
    duration: model.finishedAt === undefined ? "" : formatMs(model.finishedAt - model.startedAt),
    status,
    detail,
  };
  counter.tips.push(compact(data));
  return `<span class="bar model${model.failure !== undefined ? " failed" : ""}" ${n === 0 ? 'tabindex="0" ' : ""}data-n="${n}" role="img" aria-label="${escapeHtml(`model request turn ${model.turn}: ${status}, ${data.duration}`)}" style="left:${pct(scale.at(model.startedAt))};width:${pct(scale.width(model.startedAt, end))}"><span class="seg run" style="left:0;right:0"></span>${retries}</span>`;
}

function callRow(
  call: TimelineCall,
  depth: number,
  nested: string,
  scale: Scale,
  counter: Counter,
): string {
  const status = STATUS_TEXT[call.status ?? "running"];
  const finished = call.finishedAt ?? call.startedAt ?? call.queuedAt;
  const end = Math.max(finished, call.settledLateAt ?? finished);
  const span = Math.max(end - call.queuedAt, 1e-9);
  const rel = (time: number) => ((time - call.queuedAt) / span) * 100;
  const ranHandler = call.startedAt !== undefined;
  const waitEnd = call.startedAt ?? finished;
  const segments = [
    waitEnd > call.queuedAt || !ranHandler
      ? `<span class="seg wait" style="left:0;width:${pct(rel(waitEnd))}"></span>`
      : "",
    ranHandler
      ? `<span class="seg run" style="left:${pct(rel(waitEnd))};width:${pct(rel(finished) - rel(waitEnd))}"></span>`
      : "",
    call.settledLateAt !== undefined
      ? `<span class="seg late" style="left:${pct(rel(finished))};width:${pct(rel(call.settledLateAt) - rel(finished))}"></span>`
      : "",
  ].join("");
  const flags = [
    call.unsafe ? "⚑ unsafe" : "",
    call.waitReason !== undefined ? "‖ waited" : "",
    call.children.length > 0 ? `↳ ${call.children.length} child run` : "",
  ].filter((flag) => flag !== "");
  const duration = ranHandler ? formatMs(finished - (call.startedAt ?? finished)) : "did not run";
  const n = counter.bar++;
  const data: Record<string, string> = {
    title: `${call.name} (${call.kind})`,
    tool: call.name,
    id: call.id,
    turn: String(call.turn),
    queued: formatAt(call.queuedAt, scale),
    started:
      call.startedAt === undefined ? "never (no handler ran)" : formatAt(call.startedAt, scale),
    finished: call.finishedAt === undefined ? "not in trace" : formatAt(call.finishedAt, scale),
    wait: formatMs(waitEnd - call.queuedAt),
    duration,
    status: `${status.icon} ${status.text}${call.isError && call.status === "completed" ? " (is_error result)" : ""}`,
    why: [call.unsafe ? "unsafe: runs alone" : "", call.waitReason ?? ""]
      .filter(Boolean)
      .join("; "),
    inflight: call.inFlight === undefined ? "" : String(call.inFlight),
    late:
      call.settledLateAt === undefined
        ? ""
        : `${formatAt(call.settledLateAt, scale)} (result discarded)`,
    detail: call.progressCount > 0 ? `${call.progressCount} progress report(s)` : "",
  };
  counter.tips.push(compact(data));
  const icon = `${status.icon}${call.waitReason !== undefined ? "‖" : ""}${call.unsafe ? "⚑" : ""}`;
  return `<div class="row${nested}"${depthStyle(depth)} data-call="${escapeHtml(call.id)}"><div class="label">${escapeHtml(call.name)} <span class="id">${escapeHtml(call.id)}</span><span class="st">${status.icon} ${escapeHtml(status.text)}${flags.length > 0 ? ` · ${escapeHtml(flags.join(" · "))}` : ""}</span></div><div class="track"><span class="bar call s-${call.status ?? "running"}" ${n === 0 ? 'tabindex="0" ' : ""}data-n="${n}" role="img" aria-label="${escapeHtml(`${call.name} ${call.id}: ${status.text}, waited ${data.wait}, ran ${duration}`)}" style="left:${pct(scale.at(call.queuedAt))};width:${pct(scale.width(call.queuedAt, end))}">${segments}${call.status === "completed" && icon === status.icon ? "" : `<i aria-hidden="true">${icon}</i>`}</span></div></div>`;
}

function countStatuses(timeline: Timeline): string[] {
  const counts = new Map<string, number>();
  const visit = (run: TimelineRun) => {
    for (const turn of run.turns) {
      for (const model of turn.models) {
        if (model.retries.length > 0)
          counts.set("↻ retries", (counts.get("↻ retries") ?? 0) + model.retries.length);
      }
      for (const call of turn.batch?.calls ?? []) {
        const status = STATUS_TEXT[call.status ?? "running"];
        const key = `${status.icon} ${status.text}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        for (const child of call.children) visit(child);
      }
    }
    if (run.outcome?.kind === "aborted")
      counts.set("■ aborted runs", (counts.get("■ aborted runs") ?? 0) + 1);
  };
  for (const run of timeline.runs) visit(run);
  return [...counts].map(([key, count]) => `${count} ${key}`);
}

/** The indentation of a nested run's rows. */
function depthStyle(depth: number): string {
  return depth === 0 ? "" : ` style="--depth:${depth}"`;
}

/** Drops empty fields. */
function compact(data: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key in data) {
    const value = data[key];
    if (value !== undefined && value !== "") kept[key] = value;
  }
  return kept;
}

/** Characters a `<script>` element's JSON must not hold as they are. */
const SCRIPT_UNSAFE = /[<\u2028\u2029]/;

/** JSON that is safe inside a `<script>` element: no `<`, and no line separators. */
function jsonForScript(value: unknown): string {
  const json = JSON.stringify(value);
  // Most traces have none of them: one scan instead of three replacements.
  if (!SCRIPT_UNSAFE.test(json)) return json;
  return json
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function formatAt(time: number, scale: Scale): string {
  return `+${formatMs(time - scale.start)}`;
}

function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)} ms`;
}

function pct(value: number): string {
  return `${Number.isFinite(value) ? value.toFixed(3) : "0"}%`;
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

const HTML_SPECIAL = /[&<>"']/;

function escapeHtml(text: string): string {
  if (!HTML_SPECIAL.test(text)) return text;
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}
