import type { AnyRoute } from '../../http/route';
import { uploadCrashReport } from './uploads';
import { createSymbolUpload, listSymbolFiles } from './symbols';

/** The crashes area's routes: routes/index.ts registers them by this one name. */
export const crashRoutes: AnyRoute[] = [uploadCrashReport, createSymbolUpload, listSymbolFiles];
