/** Stops the containers global-setup started (none when the services were already running). */
export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as { __SLUICE_CONTAINERS__?: Array<{ stop(): Promise<unknown> }> })
    .__SLUICE_CONTAINERS__;
  await Promise.all((started ?? []).map((c) => c.stop()));
}
