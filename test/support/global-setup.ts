import { NATS, POSTGRES, REDIS, reachable, type ServiceSpec } from './services';

const started: Array<{ stop(): Promise<unknown> }> = [];

/**
 * Before the integration and cluster tests: make sure every service is
 * reachable. A developer machine with Docker but no services gets them from
 * testcontainers; otherwise the run stops at once with the command that
 * starts the missing service (instead of every test timing out).
 */
export default async function globalSetup(): Promise<void> {
  for (const spec of [POSTGRES, REDIS, NATS]) {
    const url = process.env[spec.env] ?? spec.defaultUrl;
    if (await reachable(url)) continue;
    const containerUrl = await startContainer(spec).catch(() => null);
    if (containerUrl === null) {
      throw new Error(
        `${spec.name} is not reachable at ${url}. Start it with: ${spec.startHint} ` +
          `(or set ${spec.env}; with Docker available, testcontainers starts one).`,
      );
    }
    process.env[spec.env] = containerUrl;
  }
  (globalThis as { __SLUICE_CONTAINERS__?: typeof started }).__SLUICE_CONTAINERS__ = started;
}

async function startContainer(spec: ServiceSpec): Promise<string> {
  const { GenericContainer, Wait } = await import('testcontainers');
  let container = new GenericContainer(spec.image)
    .withExposedPorts(spec.containerPort)
    .withEnvironment(spec.containerEnv ?? {})
    .withWaitStrategy(Wait.forListeningPorts());
  if (spec.command) container = container.withCommand(spec.command);
  const running = await container.start();
  started.push(running);
  return spec.urlFor(running.getHost(), running.getMappedPort(spec.containerPort));
}
