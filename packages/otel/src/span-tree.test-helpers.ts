import { SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** A tracer provider whose spans land in memory, for the tests. */
export function memoryTracing(): {
  readonly provider: BasicTracerProvider;
  readonly exporter: InMemorySpanExporter;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, exporter };
}

/** The span's start or end, in epoch milliseconds. */
export function millis(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/**
 * The spans as an indented tree: each line the span's name, `!error.type` when it failed;
 * children in start order (ties by `lattice.batch.index`, then name).
 */
export function spanTree(spans: readonly ReadableSpan[]): string {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  for (const span of spans) {
    const parentId = span.parentSpanContext?.spanId;
    const key = parentId !== undefined && ids.has(parentId) ? parentId : undefined;
    const list = byParent.get(key) ?? [];
    list.push(span);
    byParent.set(key, list);
  }
  const lines: string[] = [];
  const walk = (parentId: string | undefined, depth: number): void => {
    const children = [...(byParent.get(parentId) ?? [])].sort(
      (a, b) =>
        millis(a.startTime) - millis(b.startTime) ||
        Number(a.attributes["lattice.batch.index"] ?? 0) -
          Number(b.attributes["lattice.batch.index"] ?? 0) ||
        a.name.localeCompare(b.name),
    );
    for (const span of children) {
      const failed =
        span.status.code === SpanStatusCode.ERROR
          ? ` !${String(span.attributes["error.type"])}`
          : "";
      lines.push(`${"  ".repeat(depth)}${span.name}${failed}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join("\n");
}

/** Every string an exporter would send for these spans: attributes, events, links, status. */
export function exportedText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      links: span.links,
      status: span.status,
    })),
  );
}
