/**
 * A reconcile the operator refuses for a reason of its own (not the database's ManifestError): the
 * resource is Ready=False with this reason and message and a Warning Event, and is retried with
 * backoff like a ManifestError, since what it waits for may change elsewhere.
 */
export class ReadyRefusal extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReadyRefusal';
  }
}
