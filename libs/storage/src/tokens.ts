/** Injection token of the TrellisStore in Nest modules. */
export const STORE = Symbol.for('trellis.store');
