export * from './config';
export * from './operator';
export { FINALIZER } from './finalizers';
export { SECRET_KEY_FIELD, SECRET_KEY_ID_FIELD, secretNameOf } from './server-key';
