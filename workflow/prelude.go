package workflow

// prelude runs before the script. It puts the determinism guards in place
// and defines pipeline and parallel on top of agent(); the native helpers
// it uses (__checkItems, __dropped) are removed from the global scope.
const prelude = `(function (g) {
  "use strict";
  const checkItems = g.__checkItems, dropped = g.__dropped;
  delete g.__checkItems; delete g.__dropped;
  const RealDate = g.Date;
  const clock = "is not available in a workflow: scripts must be deterministic so a resumed run replays the same steps; pass times in through args";
  function WorkflowDate(...a) {
    if (!new.target) throw new Error("Date() " + clock);
    if (a.length === 0) throw new Error("new Date() without arguments " + clock);
    return Reflect.construct(RealDate, a, new.target);
  }
  WorkflowDate.prototype = RealDate.prototype;
  Object.defineProperty(RealDate.prototype, "constructor", {value: WorkflowDate});
  WorkflowDate.UTC = RealDate.UTC;
  WorkflowDate.parse = RealDate.parse;
  WorkflowDate.now = function () { throw new Error("Date.now() " + clock); };
  g.Date = WorkflowDate;
  Math.random = function () { throw new Error("Math.random() is not available in a workflow: scripts must be deterministic so a resumed run replays the same steps; derive variety from the item or its index"); };

  g.parallel = async function parallel(thunks) {
    if (!Array.isArray(thunks)) throw new TypeError("parallel(thunks) takes an array of functions");
    checkItems(thunks.length, "parallel");
    return Promise.all(thunks.map(async (t, i) => {
      try { return await t(); } catch (e) { dropped("parallel", i, e); return null; }
    }));
  };
  g.pipeline = async function pipeline(items, ...stages) {
    if (!Array.isArray(items)) throw new TypeError("pipeline(items, ...stages) takes an array of items");
    checkItems(items.length, "pipeline");
    return Promise.all(items.map(async (item, i) => {
      let prev = item;
      try {
        for (const stage of stages) prev = await stage(prev, item, i);
        return prev;
      } catch (e) { dropped("pipeline", i, e); return null; }
    }));
  };
})(globalThis);`
