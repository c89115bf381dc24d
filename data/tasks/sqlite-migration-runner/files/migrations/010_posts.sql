CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), body TEXT NOT NULL);
CREATE INDEX idx_posts_user ON posts(user_id);
