/**
 * The answer shapes every area shares are declared once, in the core (apps/core/src/shapes): the
 * core's types are their Static<>, and the document names each once under components/schemas.
 */
export { PlatformPlayer, PlatformTokens } from '@hearth/core';
