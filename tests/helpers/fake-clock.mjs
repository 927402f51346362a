// Preload (`node --import <this file>`) for CLI children whose clock a test sets: with TEST_CLOCK_AT=<ISO>,
// the process starts at that instant and its clock runs on from there (Date.now and `new Date()` shifted;
// timers untouched). The only thing faked in the stories that use it (the CLIs have no clock option).
const at = process.env.TEST_CLOCK_AT;
if (at) {
  const offset = Date.parse(at) - Date.now();
  if (Number.isNaN(offset)) throw new Error(`TEST_CLOCK_AT is not a date: ${at}`);
  const Real = Date;
  class ShiftedDate extends Real {
    constructor(...args) {
      if (args.length === 0) super(Real.now() + offset);
      else super(...args);
    }
    static now() {
      return Real.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate;
}
