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
export { parseTraceJsonl } from "./parse-trace-jsonl.js";
export { type RenderTimelineOptions, renderTimeline } from "./render-timeline.js";
export { TraceParseError } from "./trace-parse-error.js";
