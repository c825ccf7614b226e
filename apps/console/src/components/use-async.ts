import { useCallback, useEffect, useRef, useState } from 'react';

export interface AsyncState<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  /** Runs the load again (keeps the old data on screen meanwhile). */
  reload(): void;
}

/** Loads data for the given keys; a newer load wins over an older one still in flight. */
export function useAsync<T>(load: () => Promise<T>, keys: readonly unknown[]): AsyncState<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  // The latest load function, called when a key changes (the function itself may stay the same).
  const latest = useRef(load);
  latest.current = load;
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    latest.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(failure);
        setLoading(false);
      },
    );
  }, keys);
  useEffect(() => {
    reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/** Runs an action, remembering its error and whether it is running (for buttons). */
export function useAction(): { busy: boolean; error: unknown; run(action: () => Promise<unknown>): Promise<boolean>; clear(): void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}
