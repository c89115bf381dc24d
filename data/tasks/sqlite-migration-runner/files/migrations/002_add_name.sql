ALTER TABLE users ADD COLUMN name TEXT;
-- a comment; with a semicolon
INSERT INTO users (email, name) VALUES ('admin@example.com', 'Admin; the first');
