/**
 * A command whose reader goes away (`sluice query … | head -2`: head exits, the next write fails
 * with EPIPE) ends quietly with status 0, as Unix tools do. Any other write error on the stream is
 * still thrown, as before.
 */
export function endQuietlyWhenReaderLeaves(out: NodeJS.WritableStream, exit: (code: number) => void): void {
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') exit(0);
    else throw err;
  });
}
