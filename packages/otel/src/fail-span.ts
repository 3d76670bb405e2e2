import { type Span, SpanStatusCode } from "@opentelemetry/api";
import { ATTR_ERROR_TYPE } from "./attribute-names.js";

/** Marks a span failed: `error.type` and status ERROR. Internal. */
export function failSpan(span: Span, errorType: string, message: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
