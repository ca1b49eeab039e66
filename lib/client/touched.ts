/**
 * @module
 * Which fields the user changed on this page: a page that moves to a new build keeps only those
 * (`stale.ts`), never a copy of what the old page came with - a field the server filled and the
 * user left alone shows the new page's value. A field is marked on the element itself under a
 * global symbol: the boot runtime, which listens from the start, and the action client, which
 * reads the marks when a page moves, are separate bundles.
 */
const TOUCHED = Symbol.for("app.touched");

type Marked = EventTarget & { [TOUCHED]?: true };

/** From now on, marks every field an `input` or `change` event reaches: typed, picked, cleared. */
export function watchTouched(): void {
  const mark = (event: Event) => {
    if (event.target) (event.target as Marked)[TOUCHED] = true;
  };
  addEventListener("input", mark, { capture: true, passive: true });
  addEventListener("change", mark, { capture: true, passive: true });
}

/** Whether the user changed `field` since the page loaded (or the page put back a kept value). */
export function wasTouched(field: Element): boolean {
  return (field as Marked)[TOUCHED] === true;
}
