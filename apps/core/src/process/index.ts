/** @hearth/core/process: what the other workspaces import of process/ (docs/architecture.md "How an area plugs in"). */
export * from './serving';
export * from './telemetry';
export * from './instruments';
export * from './series-metrics';
export * from './declared-metrics';
