// Pure: a loader with its own memory, for what an isolate loads once and keeps (the token table, the embedding table).

/**
 * `load` wrapped so that concurrent callers share one load, a loaded value is kept for every later call, and a
 * failed load is forgotten once it has failed (the next call tries again). The argument of the first call that
 * loads is the one used.
 */
export function loadOnce<A, T>(load: (argument: A) => Promise<T>): (argument: A) => Promise<T> {
  let shared: Promise<T> | undefined;
  return (argument) => {
    if (shared) return shared;
    const loading = load(argument);
    shared = loading;
    loading.catch(() => {
      if (shared === loading) shared = undefined;
    });
    return loading;
  };
}
