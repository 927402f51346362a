// PostgreSQL's errors as the storage faults SQLite's become (db/faults.ts), so /health, `digest status`
// and the console name a PostgreSQL outage in the same words and codes as a full or read-only SQLite file.
//   connection refused, reset, timed out, unknown host, SQLSTATE 08*, 57P* -> DB_UNREACHABLE
//   53100 disk_full, 53* (out of memory, too many connections)            -> DB_FULL / DB_UNREACHABLE
//   42501 insufficient_privilege, 25006 read_only_sql_transaction          -> DB_READONLY
//   55P03 lock_not_available, 40P01 deadlock, 57014 query_canceled (timeout) -> DB_LOCKED
//   58*  system errors (I/O)                                               -> DB_IO
import { StorageFault, type StorageFaultCode } from '../faults.ts';
import { isConnectionLoss } from './retry.ts';

function faultOf(code: string): StorageFaultCode | undefined {
  if (code === '53100') return 'DB_FULL';
  if (code.startsWith('53')) return 'DB_UNREACHABLE';
  if (code === '42501' || code === '25006') return 'DB_READONLY';
  if (code === '55P03' || code === '40P01' || code === '57014') return 'DB_LOCKED';
  if (code.startsWith('58')) return 'DB_IO';
  return undefined;
}

/** The storage fault a `pg` error is, else undefined (a constraint or syntax error is a bug, not a fault). */
export function pgStorageFault(e: unknown): StorageFault | undefined {
  if (e instanceof StorageFault) return e;
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, message } = e as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(e);
  if (isConnectionLoss(e)) return new StorageFault('DB_UNREACHABLE', typeof code === 'string' ? code : 'connection', text, e);
  const fault = typeof code === 'string' ? faultOf(code) : undefined;
  return fault ? new StorageFault(fault, code as string, text, e) : undefined;
}
