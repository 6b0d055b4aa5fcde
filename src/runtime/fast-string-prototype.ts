/**
 * Gives `String.prototype` fast properties again after a library made it a prototype of its own
 * class: ioredis 6 declares `class VerbatimString extends String`, and on V8 an object that becomes
 * another object's prototype is turned into a dictionary of properties. From then on every method
 * looked up on a string in optimized code (`s.charCodeAt(k)` in the single pass's byte matching)
 * is a generic property load: loading ioredis made the single pass cost 20 % more CPU per event.
 * V8 makes an object's prototype chain fast again when a property is added to an object that
 * inherits from it, which is what this does. Call it after the library is loaded; it is idempotent.
 *
 * This relies on V8's internals, but needs no fallback: adding a property to a new object changes
 * nothing a program can observe, so on a V8 that behaves otherwise it is merely useless.
 * test/unit/runtime/fast-string-prototype.test.ts fails loudly then (it checks both the cause and
 * the cure with `%HasFastProperties`); the `internals` bench suite measures what it is worth.
 */
export function keepStringPrototypeFast(): void {
  const heir = Object.create(String.prototype) as { added?: boolean };
  heir.added = true;
}
