/** `sluice cluster`: N collectors and HAProxy on loopback. */
export async function runClusterCommand(
  _args: readonly string[],
  _env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  throw new Error('sluice cluster is not available yet');
}
