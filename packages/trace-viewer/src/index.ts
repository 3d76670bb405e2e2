export {
  buildTimeline,
  type Timeline,
  type TimelineBatch,
  type TimelineCall,
  type TimelineCallStatus,
  type TimelineMarker,
  type TimelineModelCall,
  type TimelineRun,
  type TimelineTurn,
} from "./build-timeline.js";
export {
  type CutTraceLine,
  type ParseTraceJsonlOptions,
  parseTraceJsonl,
} from "./parse-trace-jsonl.js";
export { type RenderTimelineOptions, renderTimeline } from "./render-timeline.js";
export { TraceEventError } from "./trace-event-error.js";
export { TraceParseError, type TraceParseErrorOptions } from "./trace-parse-error.js";
