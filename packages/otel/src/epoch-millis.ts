/** `performance.timeOrigin`, read once: its getter is a call into the runtime each time. */
let timeOrigin: number | undefined;

/** A trace event's monotonic `time` (`performance.now()`) as epoch milliseconds. Internal. */
export function epochMillis(time: number): number {
  timeOrigin ??= performance.timeOrigin;
  return timeOrigin + time;
}
