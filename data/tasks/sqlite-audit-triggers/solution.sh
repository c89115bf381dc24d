#!/bin/bash
set -e
cat > /app/triggers.sql <<'SQL'
CREATE TRIGGER accounts_no_negative_insert BEFORE INSERT ON accounts WHEN NEW.balance < 0
BEGIN SELECT RAISE(ABORT, 'insufficient funds'); END;
CREATE TRIGGER accounts_no_negative_update BEFORE UPDATE ON accounts WHEN NEW.balance < 0
BEGIN SELECT RAISE(ABORT, 'insufficient funds'); END;

CREATE TRIGGER accounts_audit_insert AFTER INSERT ON accounts BEGIN
  INSERT INTO audit_log (table_name, row_id, action, old_values, new_values)
  VALUES ('accounts', NEW.id, 'INSERT', NULL,
          json_object('id', NEW.id, 'owner', NEW.owner, 'balance', NEW.balance, 'currency', NEW.currency));
END;

CREATE TRIGGER accounts_audit_delete AFTER DELETE ON accounts BEGIN
  INSERT INTO audit_log (table_name, row_id, action, old_values, new_values)
  VALUES ('accounts', OLD.id, 'DELETE',
          json_object('id', OLD.id, 'owner', OLD.owner, 'balance', OLD.balance, 'currency', OLD.currency), NULL);
END;

CREATE TRIGGER accounts_audit_update AFTER UPDATE ON accounts
WHEN OLD.id IS NOT NEW.id OR OLD.owner IS NOT NEW.owner OR OLD.balance IS NOT NEW.balance OR OLD.currency IS NOT NEW.currency
BEGIN
  INSERT INTO audit_log (table_name, row_id, action, old_values, new_values)
  SELECT 'accounts', NEW.id, 'UPDATE', json_group_object(k, o), json_group_object(k, n) FROM (
    SELECT 'id' AS k, OLD.id AS o, NEW.id AS n WHERE OLD.id IS NOT NEW.id
    UNION ALL SELECT 'owner', OLD.owner, NEW.owner WHERE OLD.owner IS NOT NEW.owner
    UNION ALL SELECT 'balance', OLD.balance, NEW.balance WHERE OLD.balance IS NOT NEW.balance
    UNION ALL SELECT 'currency', OLD.currency, NEW.currency WHERE OLD.currency IS NOT NEW.currency);
END;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
SQL
